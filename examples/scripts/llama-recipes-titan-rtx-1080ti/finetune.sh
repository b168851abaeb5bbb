#!/usr/bin/env bash
# llama-recipes LoRA fine-tune on a box with a TITAN RTX and a GTX 1080 Ti
# (meta-llama/llama-cookbook#715).
# BROKEN: CUDA numbers the cards fastest first, nvidia-smi by PCI bus; index 1 is the
# GTX 1080 Ti here, whose fp16 runs at 1/64 of its fp32 speed.
export CUDA_VISIBLE_DEVICES=1

torchrun --nnodes 1 --nproc_per_node 1 -m llama_recipes.finetuning \
    --use_peft --peft_method lora \
    --use_fp16 \
    --model_name meta-llama/Llama-3.2-3B-Instruct \
    --batch_size_training 1 \
    --output_dir output/llama-3.2-3b-lora
