# A hand-written fine-tuning loop (the H2O LLM Studio seed, h2oai/h2o-llmstudio#628, in plain PyTorch).
# BROKEN: the weights are bf16, so their gradients are bf16, and the GradScaler kept from an fp16
# recipe cannot unscale them: scaler.step() fails with
# "_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'.
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM

from data import train_dataset

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16).to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
scaler = torch.cuda.amp.GradScaler()
loader = DataLoader(train_dataset, batch_size=8, shuffle=True)

model.train()
for batch in loader:
    batch = {k: v.to("cuda") for k, v in batch.items()}
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
