"""The exchange: what students hand in, read as hostile data before any stage trusts it.

- autograder.exchange.inbound: one reader of the inbound's names (who a Submit names, its assignment, the time it
  states), for Collect, the grading service and the report; a hostile name is refused alone with its reason;
- autograder.exchange.adapter: the one way in for a course's Submits (``Folder``: nbgrader's exchange folder;
  ``open_exchange``: the one the course's c.ExchangeService.* chooses), which the service and Collect read;
- autograder.exchange.ngshare: an ngshare service's Submits over its HTTP API (who the hub proved, when ngshare
  received it), judged by snapshot's rules into private copies;
- autograder.exchange.snapshot: a submission read through folder descriptors, never through a link, bounded, into a
  private copy (Collect), or only walked (the service's and Collect's check before copying).

Hands on a Submit's entry and a private copy of its files: autograder.hub.collect puts the copy into the course's
submitted/ folder, autograder.service.instant checks it.
"""
