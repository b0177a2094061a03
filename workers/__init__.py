"""RQ workers: bot moves, replays and turn timers (docs/bots.md).

``bots/``       the bot algorithms, one module per level; their only input is a seat's view
``jobs.py``     the RQ jobs (plain functions): play_bot, turn_timeout, build_replay
``dispatch.py`` enqueueing: the store listener, job ids, the watchdog sweep
``replay.py``   re-applying a match's action log to its seed (pure)
``runtime.py``  the worker's configuration, ``run_worker`` and the embedded worker process
"""
