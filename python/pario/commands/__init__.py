"""Argument parsing of each ``pario`` subcommand (one module per subcommand)."""
