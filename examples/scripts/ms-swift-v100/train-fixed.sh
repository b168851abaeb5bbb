#!/usr/bin/env bash
# ms-swift LoRA fine-tune on one Tesla V100 (no bf16).
# FIXED: fp32 weights with fp16 autocast and dynamic loss scaling, said out loud: what
# ms-swift 3.2.2 can run safely on this card (on ms-swift>=3.3.1 `--fp16 false` is honoured).
# precheck still warns: Qwen2.5 was released in bf16 (fp16 activations may overflow), and a
# 7B model's fp32 weights fill most of the V100's 32 GB.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0
MODEL=Qwen/Qwen2.5-7B-Instruct

swift sft \
    --model "$MODEL" \
    --train_type lora \
    --torch_dtype float32 \
    --fp16 true \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-en#500' \
    --max_length 2048 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --learning_rate 1e-4 \
    --num_train_epochs 1 \
    --output_dir output 2>&1 | tee train.log
