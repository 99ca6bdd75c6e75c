"""The course library: attention, tokenizer, transformer and the data they read; import submodules as needed."""
