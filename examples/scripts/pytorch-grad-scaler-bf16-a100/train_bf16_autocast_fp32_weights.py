# A hand-written fine-tuning loop (the H2O LLM Studio seed, h2oai/h2o-llmstudio#628, in plain PyTorch).
# FIXED: fp32 master weights with bf16 autocast; bf16 keeps fp32's exponent range, so no loss
# scaling is needed and there is no GradScaler.
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM

from data import train_dataset

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.float32).to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
loader = DataLoader(train_dataset, batch_size=8, shuffle=True)

model.train()
for batch in loader:
    batch = {k: v.to("cuda") for k, v in batch.items()}
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
