#!/usr/bin/env bash
# An HF Trainer script launched by accelerate on two A100s.
# FIXED: the launcher and the script agree on bf16.
accelerate launch --mixed_precision bf16 --num_processes 2 train.py \
    --model_name_or_path Qwen/Qwen2.5-1.5B \
    --torch_dtype float32 \
    --output_dir out \
    --per_device_train_batch_size 4 \
    --learning_rate 2e-5 \
    --bf16 True
