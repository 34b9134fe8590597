"""The small core every stage builds on: data types, JSON records with clear errors, text utilities,
reasoning chains and what the command-line entry points share. It imports nothing of the project."""
