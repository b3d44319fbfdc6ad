"""The world model: its config and presets, the component interfaces and the containers passed between them,
shared layers, losses, freeze policies and finetuning defaults, normalisation and the model card."""
