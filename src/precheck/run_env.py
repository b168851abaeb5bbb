"""The environment variables any run may be steered by (read by the shell reader and the dialects)."""

from __future__ import annotations

#: environment variables any run may be steered by
RUN_ENV = (
    "ACCELERATE_MIXED_PRECISION",
    "ACCELERATE_USE_DEEPSPEED",
    "ACCELERATE_USE_FSDP",
    "ACCELERATE_DEEPSPEED_ZERO_STAGE",
    "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE",
    "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE",
    "ACCELERATE_DOWNCAST_BF16",
    "NVIDIA_TF32_OVERRIDE",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    #: the workers a launcher starts on this machine (torchrun --nproc_per_node, accelerate num_processes)
    "LOCAL_WORLD_SIZE",
    #: the GPUs Slurm gives each node (``#SBATCH --gres=gpu:8``, ``srun --gpus-per-node=8``)
    "SLURM_GPUS_ON_NODE",
)
