"""The command-line programs: `hlo2penguin` (`hlo2penguin`, with its
subcommands `check`, `verify`, `regress`), `hlo2penguin-opt` (`opt`), and
what they share (`support`, `workers`)."""
