"""LoRA fine-tuning on an exam's training split, and the adapter manifest that guards evaluation."""
