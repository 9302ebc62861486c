# A Python variant whose file does not compile: its create fails with the SyntaxError.
# sagerun-variant: py-syntax run=run backend=host
def run(call)
    pass
