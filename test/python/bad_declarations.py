# Declarations sagerun refuses, each alone (test/cli/test_python.sh), and one it takes.
# sagerun-variant: py-good run=run backend=host
# sagerun-variant: py-unknown-key run=run backend=host colour=blue
# sagerun-variant: py-no-run backend=host
# sagerun-variant: py-no-backend run=run
# sagerun-variant: py-bad-backend run=run backend=gpu
# sagerun-variant: Bad_Name run=run backend=host
# sagerun-variant: py-bad-function run=not-a-name backend=host
# sagerun-variant: py-bad-param run=run backend=host param=block:int:64
# sagerun-variant: py-quote run=run backend=host description="never closed
# sagerun-variant: py-twice run=run run=again backend=host
# sagerun-variant: py-extension run=run backend=cuda extension=$SAGERUN_TEST_UNSET_EXTENSION
# sagerun-variant: py-good run=run backend=cuda
# sagerun-variant: py-inverted run=run backend=host param=block:int:5:10:1
def run(call):
    call.o[...] = 0
