"""The games Grimoire hosts, one package each, readable beside its rule book."""
