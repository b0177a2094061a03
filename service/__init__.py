"""Grimoire: a game-service backend for wizarding tabletop games."""
