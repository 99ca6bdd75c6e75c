"""The stubs students get in place of solutions: nbgrader's ClearSolutions, with a stub that names what to write.

nbgrader puts one fixed ``ClearSolutions.code_stub`` in every answer cell, so a blank notebook's every check
stops with a bare ``NotImplementedError:``. ``NamedStubs`` fills two fields of that stub per cell before
nbgrader uses it: ``{function}``, the name the cell defines (its first ``def``), and ``{place}``, where the
notebook asks for it: "section 5" below a ``## 5. ...`` heading, else "this notebook". nbgrader_config.py puts it
in generate_assignment's steps in place of ClearSolutions; every ClearSolutions option (code_stub, text_stub,
delimiters) applies.
"""

from __future__ import annotations

import re

from nbgrader.preprocessors import ClearSolutions

SECTION = re.compile(r"^##\s+(\d+)\.", re.M)  # "## 5. Reading what the store's model attends to"
FUNCTION = re.compile(r"^def\s+([A-Za-z_]\w*)", re.M)


class NamedStubs(ClearSolutions):
    """ClearSolutions whose code stub says which function is missing and in which section (see the module)."""

    def preprocess(self, nb, resources):
        self._place = "this notebook"
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "markdown":
            heading = SECTION.search(cell.source)
            if heading:
                self._place = f"section {heading.group(1)}"
            return super().preprocess_cell(cell, resources, cell_index)
        defined = FUNCTION.search(cell.source)
        fields = {"{function}": defined.group(1) if defined else "this cell", "{place}": self._place}
        templates = self.code_stub
        named = {}
        for language, stub in templates.items():
            for field, value in fields.items():
                stub = stub.replace(field, value)
            named[language] = stub
        self.code_stub = named
        try:
            return super().preprocess_cell(cell, resources, cell_index)
        finally:
            self.code_stub = templates
