"""The offline request writer: what a person would say to get a chain's calls made.

A step's request is composed from its tool's intent (:mod:`pipeline.language.lexicon`: a verb phrasing and
the nouns of the tool's name as slots), the entities and values of its arguments in a person's
words (:mod:`pipeline.language.phrasing`), and, for a value an earlier step returned, a reference to that
result ("that account") when the result singled it out, or the value named when it did not.
A turn wraps its steps in parts drawn independently (greeting, persona context, ask frame,
connectors, closer), so requests do not fall into a few fixed frames. Nothing is taken from a
tool's description; a parameter's description is read only to tell the id of the user a call acts as
(:func:`.step_parts.acts_as`) from the ids it acts on, and which id a noun of the tool's name stands for where no
id is named after it (``remove_attendee``'s ``contact_id``, "Contact id of the attendee to remove").
Deterministic for a given random generator.

The rooms, each importing only rooms listed before it:

- :mod:`.turn_words` and :mod:`.step_words`: the word tables, a turn's (greetings, persona contexts, ask frames,
  follow-up leads, connectors, closers, questions by what a read shows) and a step's (back, new and first
  references, role prepositions, read states, the terse user's command verbs);
- :mod:`.step_parts`: what a step's tool, parameters and results tell (a parameter's role and description, the id
  of the user a call acts as, the values a result shows or singles out);
- a step's phrase, in four mixins sharing one writer's state: :mod:`.mentions` (what the user has seen, and how
  an entity or an earlier result's value is pointed at), :mod:`.acting` (the user a call acts as, and the secrets
  told once), :mod:`.possessives` (a thing said as an entity's: "CUS-0001's accounts", "change EVT-0004's title
  to ..."), :mod:`.arguments` (an argument said as words: values, filters, flags); and :mod:`.step`, the
  ``StepWriter`` made of them (a step's verb, the nouns of its tool's name, its arguments in order, worded again
  carefully where the first wording stutters);
- :mod:`.turn`: one user turn from its steps' phrases (``compose_turn``);
- :mod:`.conversation`: the user's message for each turn of a chain (``write_turns``), and the writes a user
  could not name when asking (``unnamed_writes``).
"""
