"""The client cases: one module per concern, each case judging one clause from one scenario's run."""
