"""Fair play, offline: verifying match records (:mod:`.verify`, ``grimoire verify``) and packaging a game's
current rules to keep them installed beside newer ones (:mod:`.freeze`, ``grimoire freeze-rules``).

The primitives every layer shares -- the seed commitment, the RNG seed's derivation from the seat
entropies, the chained state hashes -- are in :mod:`service.engine.seeds`; the record a match
publishes is built by :mod:`service.store.records`; docs/fairness.md specifies them all. Nothing
here touches Redis or the network.
"""
