# A Python file without a declaration line: not a variant file.
def run(call):
    pass
