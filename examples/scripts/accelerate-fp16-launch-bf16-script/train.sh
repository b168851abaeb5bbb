#!/usr/bin/env bash
# An HF Trainer script launched by accelerate on two A100s.
# BROKEN: the launcher exports ACCELERATE_MIXED_PRECISION=fp16 while the script asks for
# --bf16 True; TrainingArguments lets the flag win, so the launcher's fp16 is silently dropped.
accelerate launch --mixed_precision fp16 --num_processes 2 train.py \
    --model_name_or_path Qwen/Qwen2.5-1.5B \
    --torch_dtype float32 \
    --output_dir out \
    --per_device_train_batch_size 4 \
    --learning_rate 2e-5 \
    --bf16 True
