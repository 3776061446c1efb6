"""Reward-integrity defences: the guards, censuses and checks that catch a candidate cheating."""
