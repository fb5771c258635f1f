"""`--grad` on whole programs: gradients against autograd and finite differences."""
