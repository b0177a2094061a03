"""Players across matches: names, ratings and the quick-match pairing policy.

Pure logic (no Redis, no HTTP): the store keeps players, tokens, queues and
ratings (service/store/players.py, service/store/pairing.lua, service/store/ratings.py);
this package decides what a valid name is, how a finished match moves ratings
(the openskill library lives here) and how far apart two waiting players may be.
"""
