"""Generates the PDFs in this folder whose exact text is known (see README.md).

Run with fpdf2 installed (pip install fpdf2==<version in README.md>):
    python tests/data/pdf/generate.py tests/data/pdf
The output is deterministic (fixed creation date, no random state), so re-running it changes nothing.
"""

import datetime
import sys
from pathlib import Path

from fpdf import FPDF

FIXED_DATE = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)

CODE = [
    "fn main() {",
    "    let vault = open(\"notes\");",
    "    for note in vault.notes() {",
    "        println!(\"{}\", note.title);",
    "    }",
    "}",
]


def new_pdf(title):
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(title)
    pdf.set_author("Quire test suite")
    pdf.set_auto_page_break(auto=True, margin=20)
    return pdf


def heading(pdf, text, size):
    pdf.set_font("Helvetica", "B", size)
    pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def body(pdf, text):
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def code_block(pdf, lines):
    pdf.set_font("Courier", "", 10)
    for line in lines:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def known(out):
    pdf = new_pdf("Quire PDF Fixture")
    pdf.add_page()
    heading(pdf, "Getting Started", 24)
    body(pdf, "This document is generated so that its text is known exactly.")
    heading(pdf, "Installing the Tool", 18)
    # A prose line with a monospace run inside it.
    pdf.set_font("Helvetica", "", 11)
    pdf.write(6, "Run the command ")
    pdf.set_font("Courier", "", 11)
    pdf.write(6, "quire serve")
    pdf.set_font("Helvetica", "", 11)
    pdf.write(6, " to start the server.")
    pdf.ln(10)
    code_block(pdf, CODE)
    heading(pdf, "Links and References", 14)
    pdf.set_font("Helvetica", "", 11)
    pdf.write(6, "See the ")
    pdf.write(6, "project page", link="https://example.org/quire")
    pdf.write(6, " or write to ")
    pdf.write(6, "the authors", link="mailto:authors@example.org")
    pdf.write(6, ".")
    pdf.ln(10)
    pdf.add_page()
    heading(pdf, "Second Page", 18)
    body(pdf, "The same link again must be listed once.")
    pdf.set_font("Helvetica", "", 11)
    pdf.write(6, "Project page again", link="https://example.org/quire")
    pdf.ln(10)
    pdf.output(str(out / "generated-known.pdf"))


WORDS = (
    "vault note index search link graph heading section property tag task query result "
    "agent model server client protocol request response cache file folder path revision "
    "conflict write read move delete trash watcher embedding vector keyword ranking fusion"
).split()


def paper(out, pages=50):
    """A paper-like document for the benchmark: two columns of prose, section headings and a code
    listing every few pages."""
    pdf = new_pdf("A Synthetic Paper for Benchmarks")
    pdf.set_auto_page_break(auto=False)
    state = 7

    def word():
        nonlocal state
        state = (state * 1103515245 + 12345) % (2**31)
        return WORDS[state % len(WORDS)]

    column_width = 85
    for page in range(pages):
        pdf.add_page()
        if page == 0:
            heading(pdf, "A Synthetic Paper for Benchmarks", 20)
        for column, x in enumerate((15, 110)):
            y = 30
            pdf.set_xy(x, y)
            if column == 0 and page % 4 == 0:
                pdf.set_font("Helvetica", "B", 14)
                pdf.set_xy(x, y)
                pdf.cell(column_width, 8, f"{page // 4 + 1}. Section about {word()} and {word()}")
                y += 12
            while y < 270:
                if column == 1 and page % 5 == 2 and 120 < y < 130:
                    pdf.set_font("Courier", "", 8)
                    for line in CODE:
                        pdf.set_xy(x, y)
                        pdf.cell(column_width, 4, line)
                        y += 4
                    y += 4
                    continue
                pdf.set_font("Helvetica", "", 9)
                line = " ".join(word() for _ in range(6))
                pdf.set_xy(x, y)
                pdf.cell(column_width, 4.5, line)
                y += 4.5
    pdf.output(str(out / "paper-50-pages.pdf"))


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    known(target)
    paper(target)
