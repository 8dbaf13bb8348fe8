"""What each move of a card is called where a person reads its history, in English and
German: `/log`, `chatbot card` and the card's web page say "review approved", not
`review_approved`. The codes stay in the database and in `--json` output, for scripts.

Chat and the web board may not import each other, so the labels are here, beside the
phase labels (phases.py).
"""

from __future__ import annotations

from chatbot.domain.transitions import Action

A = Action

EN: dict[str, str] = {
    # Owner actions: what the owner did.
    A.START: "started",
    A.ANSWER: "answered",
    A.SPLIT: "split asked for",
    A.RESEARCH: "research asked for",
    A.INSPECT: "inspection asked for",
    A.FIX: "repair asked for",
    A.COMMENT: "line comment",
    A.RETRY: "retried",
    A.CANCEL: "cancelled",
    A.ARCHIVE: "archived",
    A.DEPLOY: "deployment asked for",
    A.ALLOW: "another budget allowed",
    A.STEER: "went on with a steer",
    A.CONFIRM: "split plan approved",
    # What the worker applied: what a role decided or what became of its run.
    A.OPERATOR_DIRECT: "operator chose to build directly",
    A.OPERATOR_SPLIT: "operator split the card",
    A.OPERATOR_SPLIT_PLANNED: "operator planned a split",
    A.OPERATOR_NEEDS_HUMAN: "operator asked a question",
    A.OPERATOR_FAILED: "operator run failed",
    A.BUILD_COMMITTED: "builder committed",
    A.BUILD_ESCALATED: "builder hit its limit; next step of the ladder",
    A.BUILD_LIMIT_SPENT: "builder hit its limit; no step left",
    A.BUILD_FAILED: "builder run failed",
    A.REVIEW_APPROVED: "review approved",
    A.REVIEW_REJECTED: "review rejected",
    A.REVIEW_FAILED: "review run failed",
    A.DEPLOY_SUCCEEDED: "deployed",
    A.DEPLOY_FAILED: "deployment failed",
    A.SPLIT_APPLIED: "split into children",
    A.SPLIT_FAILED: "split failed",
    A.CHILDREN_DONE: "all children succeeded",
    A.DRAFT_ASKED: "planner asked a question",
    A.DRAFT_COMPLETED: "draft became a planned card",
    A.DRAFT_FAILED: "planner turn failed",
    A.RESEARCH_STARTED: "research started",
    A.RESEARCH_DONE: "research done",
    A.RESEARCH_FAILED: "research failed",
    A.INSPECTOR_ASKED: "inspector asked a question",
    A.INSPECTOR_DONE: "inspection done",
    A.INSPECTOR_FAILED: "inspection failed",
    A.FIXER_ASKED: "fixer asked a question",
    A.FIXER_COMMITTED: "fixer committed",
    A.FIXER_FAILED: "repair failed",
    A.CHILD_STARTED: "started in its wave",
    A.SYNTHESIS_DONE: "synthesis done",
    A.SYNTHESIS_FAILED: "synthesis failed",
    A.RUN_INTERRUPTED: "run interrupted",
    A.BUDGET_STOPPED: "stopped by the budget",
    # How a card came to be (board/moves.py, importer.py, store/cards.py).
    "create": "created",
    "draft": "draft started",
    "split_child": "created by a split",
    "import": "imported from its intent file",
    # A file tied to the card (board/attachments.py).
    "attach": "file attached",
}

DE: dict[str, str] = {
    A.START: "gestartet",
    A.ANSWER: "beantwortet",
    A.SPLIT: "Aufteilung angefordert",
    A.RESEARCH: "Recherche angefordert",
    A.INSPECT: "Prüfung angefordert",
    A.FIX: "Reparatur angefordert",
    A.COMMENT: "Zeilenkommentar",
    A.RETRY: "wiederholt",
    A.CANCEL: "abgebrochen",
    A.ARCHIVE: "archiviert",
    A.DEPLOY: "Deployment angefordert",
    A.ALLOW: "weiteres Budget freigegeben",
    A.STEER: "mit einer Lenkung fortgesetzt",
    A.CONFIRM: "Aufteilungsplan freigegeben",
    A.OPERATOR_DIRECT: "Operator lässt direkt umsetzen",
    A.OPERATOR_SPLIT: "Operator hat die Karte aufgeteilt",
    A.OPERATOR_SPLIT_PLANNED: "Operator plant eine Aufteilung",
    A.OPERATOR_NEEDS_HUMAN: "Operator hat eine Frage gestellt",
    A.OPERATOR_FAILED: "Operator-Lauf fehlgeschlagen",
    A.BUILD_COMMITTED: "Builder hat committet",
    A.BUILD_ESCALATED: "Builder am Limit; nächste Stufe der Leiter",
    A.BUILD_LIMIT_SPENT: "Builder am Limit; keine Stufe mehr",
    A.BUILD_FAILED: "Builder-Lauf fehlgeschlagen",
    A.REVIEW_APPROVED: "Review angenommen",
    A.REVIEW_REJECTED: "Review abgelehnt",
    A.REVIEW_FAILED: "Review-Lauf fehlgeschlagen",
    A.DEPLOY_SUCCEEDED: "ausgerollt",
    A.DEPLOY_FAILED: "Deployment fehlgeschlagen",
    A.SPLIT_APPLIED: "in Kinder aufgeteilt",
    A.SPLIT_FAILED: "Aufteilung fehlgeschlagen",
    A.CHILDREN_DONE: "alle Kinder erfolgreich",
    A.DRAFT_ASKED: "Planner hat eine Frage gestellt",
    A.DRAFT_COMPLETED: "Entwurf wurde eine geplante Karte",
    A.DRAFT_FAILED: "Planner-Schritt fehlgeschlagen",
    A.RESEARCH_STARTED: "Recherche gestartet",
    A.RESEARCH_DONE: "Recherche fertig",
    A.RESEARCH_FAILED: "Recherche fehlgeschlagen",
    A.INSPECTOR_ASKED: "Inspector hat eine Frage gestellt",
    A.INSPECTOR_DONE: "Prüfung fertig",
    A.INSPECTOR_FAILED: "Prüfung fehlgeschlagen",
    A.FIXER_ASKED: "Fixer hat eine Frage gestellt",
    A.FIXER_COMMITTED: "Fixer hat committet",
    A.FIXER_FAILED: "Reparatur fehlgeschlagen",
    A.CHILD_STARTED: "in ihrer Welle gestartet",
    A.SYNTHESIS_DONE: "Synthese fertig",
    A.SYNTHESIS_FAILED: "Synthese fehlgeschlagen",
    A.RUN_INTERRUPTED: "Lauf unterbrochen",
    A.BUDGET_STOPPED: "vom Budget angehalten",
    "create": "angelegt",
    "draft": "Entwurf begonnen",
    "split_child": "durch eine Aufteilung angelegt",
    "import": "aus ihrer Intent-Datei importiert",
    "attach": "Datei angehängt",
}

LABELS: dict[str, dict[str, str]] = {"en": EN, "de": DE}


def action_label(action: str, locale: str = "en") -> str:
    """The move `action` (an event's code) in words; an unknown code as it is, so an
    event written by another version still shows."""
    return LABELS.get(locale, EN).get(action, action)
