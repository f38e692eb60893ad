"""What the commands share: their options, how they read what the command line names, and
how they write reports and exit."""
