"""The course as an LTI 1.3 tool (PyLTI1p3): launch from the LMS, Deep Linking, and scores sent back (AGS).

- autograder.lms.lti.config: the tool's config file (keys, the platforms' registrations), checked when read;
- autograder.lms.lti.store: what the tool remembers: one-time nonces and states in memory, and per course the
  students' LMS identities and the assignments' line items (lti.json in the course folder);
- autograder.lms.lti.tool: the web service (tornado): JWKS, OIDC login, launch, Deep Linking;
- autograder.lms.lti.placement: a Deep Linking launch places once, from the browser that made it;
- autograder.lms.lti.passback: each student's score to the LMS's line item, through a durable outbox.
"""
