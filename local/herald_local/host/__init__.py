"""This machine, which hosts every emulated service: the child processes the stack starts (moto,
the function runners), each ending with its parent (``processes``), and the console and log file
that every line of every process goes to (``console``)."""
