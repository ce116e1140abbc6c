"""Hyper-parameter checks shared by the optimizers, with torch's messages."""


def check_non_negative(**values):
    names = {"lr": "learning rate", "eps": "epsilon value"}
    for key, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {names.get(key, key + ' value')}: {value}")


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
