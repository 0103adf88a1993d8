"""The fault mechanisms: what each fault does on a node or a daemon and how it is undone (disk,
power, network, memory, CPU, I/O, corruption, fill, supervision)."""
