"""The middle passes: tensor IR to tensor-core IR, and the clean-ups that keep it small."""
