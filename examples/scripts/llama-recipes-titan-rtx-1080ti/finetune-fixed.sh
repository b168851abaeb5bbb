#!/usr/bin/env bash
# llama-recipes LoRA fine-tune on the TITAN RTX + GTX 1080 Ti box.
# FIXED: number the cards as nvidia-smi does and expose only the TITAN RTX (index 0 on
# this box), which has fp16 tensor cores.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_VISIBLE_DEVICES=0

torchrun --nnodes 1 --nproc_per_node 1 -m llama_recipes.finetuning \
    --use_peft --peft_method lora \
    --use_fp16 \
    --model_name meta-llama/Llama-3.2-3B-Instruct \
    --batch_size_training 1 \
    --output_dir output/llama-3.2-3b-lora
