"""The judge and the candidate in separate processes.

The process that decides a reward (the judge: reference outputs, comparisons, verdict, the
result file) never imports candidate code. The candidate runs in a child process forked from the
judge before anything secret exists in the judge's memory, and talks to it only through one
socket (``channel.py``): it is told which inputs to run, and sends back timings and, when asked
after the fact, the outputs of calls chosen by the judge.
"""
