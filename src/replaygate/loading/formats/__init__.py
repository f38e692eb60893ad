"""Readers of other tools' files, turned into the same loaded packs, contracts and case inputs."""
