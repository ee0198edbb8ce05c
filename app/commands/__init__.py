"""CLI subcommands, discovered by app.cli."""
