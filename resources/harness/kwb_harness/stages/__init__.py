"""The evaluation stages (inspect, compile, verify, profile, baseline) and what runs them."""
