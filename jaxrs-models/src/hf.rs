//! Reading a model folder as `transformers`` `save_pretrained` writes it.
