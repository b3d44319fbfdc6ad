"""The toy map: dynamics-only adaptation over a grid of ``toy-reach`` profiles (docs/plan-ranking.md, section 5)."""
