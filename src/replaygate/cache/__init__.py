"""The results cache of `run --cache`: a stage of its own. It looks results up before the
contracts load (a contract whose cases all hit is never parsed) and stores them after the
cases are judged; loading and the engine do not know it exists."""
