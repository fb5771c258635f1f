"""What compiling knows of kernel tuning: the tuning file's records (`records.py`) and the
candidate space of an op's kernel (`candidates.py`). They sit below the pipeline, which
reads tuning files; the tuner that times candidates (`linnet.tune`) sits above it."""
