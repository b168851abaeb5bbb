#!/usr/bin/env bash
# ms-swift LoRA fine-tune on one Tesla V100 (no bf16), as in modelscope/ms-swift#3896.
# BROKEN: ms-swift 3.0.0-3.3.0.post1 derives fp16 from --torch_dtype and ignores
# `--fp16 false`: the run trains in fp16 although the script says otherwise.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0
MODEL=Qwen/Qwen2.5-7B-Instruct

swift sft \
    --model "$MODEL" \
    --train_type lora \
    --torch_dtype float16 \
    --fp16 false \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-en#500' \
    --max_length 2048 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --learning_rate 1e-4 \
    --num_train_epochs 1 \
    --output_dir output 2>&1 | tee train.log
