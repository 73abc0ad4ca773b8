//! A page's content stream interpreted for its text: the graphics and text state each operator
//! changes, every glyph placed with its position, size and font (forms followed to a bounded
//! depth), and the glyphs gathered into lines and the text under each link. Every operator counts
//! against the document's budget.

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::fonts::FontInfo;
use super::layout::{Line, Run};
use super::{PdfLimits, number};

/// A 2D affine matrix `[a b c d e f]` as PDF writes them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Matrix([f64; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    fn from_operands(operands: &[Object]) -> Option<Matrix> {
        if operands.len() < 6 {
            return None;
        }
        let mut values = [0.0; 6];
        for (slot, operand) in values.iter_mut().zip(operands) {
            *slot = number(operand)?;
        }
        values
            .iter()
            .all(|value| value.is_finite())
            .then_some(Matrix(values))
    }

    /// `self × other`: apply `self`, then `other`.
    fn then(self, other: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [oa, ob, oc, od, oe, of] = other.0;
        Matrix([
            a * oa + b * oc,
            a * ob + b * od,
            c * oa + d * oc,
            c * ob + d * od,
            e * oa + f * oc + oe,
            e * ob + f * od + of,
        ])
    }

    fn translate(tx: f64, ty: f64) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }
}

/// The parts of the graphics state text extraction needs.
#[derive(Clone)]
struct State {
    ctm: Matrix,
    font: Option<Rc<FontInfo>>,
    font_size: f64,
    char_spacing: f64,
    word_spacing: f64,
    horizontal_scale: f64,
    leading: f64,
    rise: f64,
}

/// Reads the pages of one document, sharing its fonts and its operator budget between them.
pub(super) struct Reader<'a> {
    document: &'a Document,
    limits: &'a PdfLimits,
    fonts: HashMap<ObjectId, Rc<FontInfo>>,
    operations: usize,
    budget_exhausted: bool,
}

/// Forms nest; deeper nesting is treated as content to skip.
const MAX_FORM_DEPTH: usize = 12;

impl<'a> Reader<'a> {
    pub(super) fn new(document: &'a Document, limits: &'a PdfLimits) -> Reader<'a> {
        Reader {
            document,
            limits,
            fonts: HashMap::new(),
            operations: 0,
            budget_exhausted: false,
        }
    }

    /// Whether the document's operator budget ran out (the page that did so is cut short).
    pub(super) fn budget_exhausted(&self) -> bool {
        self.budget_exhausted
    }

    pub(super) fn read_page(&mut self, page_id: ObjectId, page: &mut PageReader) {
        let mut resources: Vec<&'a Dictionary> = Vec::new();
        if let Ok((own, inherited)) = self.document.get_page_resources(page_id) {
            resources.extend(own);
            resources.extend(
                inherited
                    .into_iter()
                    .filter_map(|id| self.document.get_dictionary(id).ok()),
            );
        }
        let mut content = Vec::new();
        for id in self.document.get_page_contents(page_id) {
            let Some(stream) = self
                .document
                .get_object(id)
                .ok()
                .and_then(|object| object.as_stream().ok())
            else {
                continue;
            };
            match stream.get_plain_content_with_limit(self.limits.max_stream_bytes) {
                Ok(bytes) if content.len() + bytes.len() <= self.limits.max_stream_bytes => {
                    content.extend_from_slice(&bytes);
                    content.push(b'\n');
                }
                // A stream that cannot be decoded (or is too large) is skipped; the rest of the
                // page may still read.
                _ => {}
            }
        }
        let state = State {
            ctm: Matrix::IDENTITY,
            font: None,
            font_size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        };
        let mut forms = Vec::new();
        self.run(&content, &resources, state, page, &mut forms);
    }

    fn lookup(
        &self,
        resources: &[&'a Dictionary],
        category: &[u8],
        name: &[u8],
    ) -> Option<(Option<ObjectId>, &'a Object)> {
        resources.iter().find_map(|dictionary| {
            let group = dictionary.get(category).ok()?;
            let group = match group {
                Object::Reference(id) => self.document.get_object(*id).ok()?,
                other => other,
            };
            let entry = group.as_dict().ok()?.get(name).ok()?;
            match entry {
                Object::Reference(id) => Some((Some(*id), self.document.get_object(*id).ok()?)),
                other => Some((None, other)),
            }
        })
    }

    fn font(&mut self, resources: &[&'a Dictionary], name: &[u8]) -> Option<Rc<FontInfo>> {
        let (id, object) = self.lookup(resources, b"Font", name)?;
        if let Some(id) = id
            && let Some(font) = self.fonts.get(&id)
        {
            return Some(font.clone());
        }
        let font = Rc::new(FontInfo::read(self.document, object.as_dict().ok()?));
        if let Some(id) = id {
            self.fonts.insert(id, font.clone());
        }
        Some(font)
    }

    /// Interprets one content stream (a page's, or a form's) operator by operator.
    fn run(
        &mut self,
        content: &[u8],
        resources: &[&'a Dictionary],
        mut state: State,
        page: &mut PageReader,
        forms: &mut Vec<ObjectId>,
    ) {
        let mut stack: Vec<State> = Vec::new();
        let mut text = TextPosition {
            text_matrix: Matrix::IDENTITY,
            line_matrix: Matrix::IDENTITY,
        };
        for operation in lopdf::content::Content::decode_iter(content) {
            // A syntax error ends this stream; what was read so far stays.
            let Ok(operation) = operation else { break };
            self.operations += 1;
            if self.operations > self.limits.max_operations {
                self.budget_exhausted = true;
                return;
            }
            let operator = operation.operator.as_str();
            let operands = &operation.operands;
            match operator {
                // Unbalanced q's in a crafted stream must not grow the stack without bound.
                "q" if stack.len() < 1024 => stack.push(state.clone()),
                "Q" => {
                    if let Some(saved) = stack.pop() {
                        state = saved;
                    }
                }
                "cm" => {
                    if let Some(matrix) = Matrix::from_operands(operands) {
                        state.ctm = matrix.then(state.ctm);
                    }
                }
                "Tf" => {
                    if let Some(Object::Name(name)) = operands.first() {
                        state.font = self.font(resources, name);
                    }
                    if let Some(size) = operands.get(1).and_then(number) {
                        state.font_size = size;
                    }
                }
                "Tc" | "Tw" | "Tz" | "TL" | "Ts" => set_text_state(operator, operands, &mut state),
                "BT" | "Td" | "TD" | "Tm" | "T*" => text.move_to(operator, operands, &mut state),
                "Tj" | "'" | "\"" => {
                    if operator != "Tj" {
                        if operator == "\"" {
                            let float = |index: usize| operands.get(index).and_then(number);
                            state.word_spacing = float(0).unwrap_or(state.word_spacing);
                            state.char_spacing = float(1).unwrap_or(state.char_spacing);
                        }
                        text.next_line(&state);
                    }
                    if let Some(Object::String(bytes, _)) = operands.last() {
                        self.show(bytes, &state, &mut text.text_matrix, page);
                    }
                }
                "TJ" => self.show_array(operands, &state, &mut text.text_matrix, page),
                "Do" => {
                    if let Some(Object::Name(name)) = operands.first() {
                        self.form(resources, name, &state, page, forms);
                    }
                }
                _ => {}
            }
        }
    }

    /// `TJ`: strings shown in turn, with the numbers between them moving the text back (in
    /// thousandths of the font size).
    fn show_array(
        &mut self,
        operands: &[Object],
        state: &State,
        text_matrix: &mut Matrix,
        page: &mut PageReader,
    ) {
        let Some(Object::Array(items)) = operands.first() else {
            return;
        };
        for item in items {
            match item {
                Object::String(bytes, _) => {
                    self.show(bytes, state, text_matrix, page);
                }
                other => {
                    if let Some(adjustment) = number(other) {
                        let tx = -adjustment / 1000.0 * state.font_size * state.horizontal_scale;
                        *text_matrix = Matrix::translate(tx, 0.0).then(*text_matrix);
                    }
                }
            }
        }
    }

    fn form(
        &mut self,
        resources: &[&'a Dictionary],
        name: &[u8],
        state: &State,
        page: &mut PageReader,
        forms: &mut Vec<ObjectId>,
    ) {
        let Some((Some(id), object)) = self.lookup(resources, b"XObject", name) else {
            return;
        };
        if forms.len() >= MAX_FORM_DEPTH || forms.contains(&id) {
            return;
        }
        let Ok(stream) = object.as_stream() else {
            return;
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return;
        }
        let Ok(content) = stream.get_plain_content_with_limit(self.limits.max_stream_bytes) else {
            return;
        };
        let matrix = stream
            .dict
            .get(b"Matrix")
            .ok()
            .and_then(|matrix| matrix.as_array().ok())
            .and_then(|values| Matrix::from_operands(values))
            .unwrap_or(Matrix::IDENTITY);
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|resources| match resources {
                Object::Reference(id) => self.document.get_dictionary(*id).ok(),
                other => other.as_dict().ok(),
            });
        let mut form_resources: Vec<&'a Dictionary> = Vec::new();
        form_resources.extend(own);
        form_resources.extend(resources.iter().copied());
        let mut form_state = state.clone();
        form_state.ctm = matrix.then(state.ctm);
        forms.push(id);
        self.run(&content, &form_resources, form_state, page, forms);
        forms.pop();
    }

    fn show(
        &mut self,
        bytes: &[u8],
        state: &State,
        text_matrix: &mut Matrix,
        page: &mut PageReader,
    ) {
        let Some(font) = &state.font else { return };
        let size = state.font_size;
        let scale = state.horizontal_scale;
        for glyph in font.decode(bytes) {
            let rendering = text_matrix.then(state.ctm);
            let [a, b, c, d, e, f] = rendering.0;
            let x = state.rise * c + e;
            let y = state.rise * d + f;
            let direction_length = (a * a + b * b).sqrt();
            let effective_size = (c * c + d * d).sqrt() * size.abs();
            let mut advance = glyph.advance * size + state.char_spacing;
            if glyph.is_space_code {
                advance += state.word_spacing;
            }
            let tx = advance * scale;
            let user_advance = tx * direction_length;
            if !glyph.text.is_empty() && effective_size.is_finite() && effective_size > 0.0 {
                let (dx, dy) = if direction_length > 0.0 {
                    (a / direction_length, b / direction_length)
                } else {
                    (1.0, 0.0)
                };
                page.glyph(PlacedGlyph {
                    text: &glyph.text,
                    x,
                    y,
                    direction: (dx, dy),
                    advance: user_advance.abs(),
                    size: effective_size,
                    monospace: font.monospace,
                });
            }
            *text_matrix = Matrix::translate(tx, 0.0).then(*text_matrix);
        }
    }
}

/// The text-state operators that set one number of `state` each.
fn set_text_state(operator: &str, operands: &[Object], state: &mut State) {
    let float = |index: usize| operands.get(index).and_then(number);
    match operator {
        "Tc" => state.char_spacing = float(0).unwrap_or(state.char_spacing),
        "Tw" => state.word_spacing = float(0).unwrap_or(state.word_spacing),
        "Tz" => state.horizontal_scale = float(0).map_or(state.horizontal_scale, |s| s / 100.0),
        "TL" => state.leading = float(0).unwrap_or(state.leading),
        "Ts" => state.rise = float(0).unwrap_or(state.rise),
        _ => {}
    }
}

/// Where the next glyph goes: the text matrix, and the start of its line.
struct TextPosition {
    text_matrix: Matrix,
    line_matrix: Matrix,
}

impl TextPosition {
    /// The text-positioning operators (`BT`, `Td`, `TD`, `Tm`, `T*`).
    fn move_to(&mut self, operator: &str, operands: &[Object], state: &mut State) {
        let float = |index: usize| operands.get(index).and_then(number);
        match operator {
            "BT" => {
                self.text_matrix = Matrix::IDENTITY;
                self.line_matrix = Matrix::IDENTITY;
            }
            "Td" | "TD" => {
                if let (Some(tx), Some(ty)) = (float(0), float(1)) {
                    if operator == "TD" {
                        state.leading = -ty;
                    }
                    self.line_matrix = Matrix::translate(tx, ty).then(self.line_matrix);
                    self.text_matrix = self.line_matrix;
                }
            }
            "Tm" => {
                if let Some(matrix) = Matrix::from_operands(operands) {
                    self.line_matrix = matrix;
                    self.text_matrix = matrix;
                }
            }
            "T*" => self.next_line(state),
            _ => {}
        }
    }

    /// Moves to the start of the next line, `leading` below.
    fn next_line(&mut self, state: &State) {
        self.line_matrix = Matrix::translate(0.0, -state.leading).then(self.line_matrix);
        self.text_matrix = self.line_matrix;
    }
}

struct PlacedGlyph<'a> {
    text: &'a str,
    x: f64,
    y: f64,
    direction: (f64, f64),
    advance: f64,
    size: f64,
    monospace: bool,
}

/// Collects one page's glyphs into lines, and the text under its links.
pub(super) struct PageReader {
    pub(super) lines: Vec<Line>,
    /// The current line's direction and where its last glyph ended (along the direction).
    current: Option<((f64, f64), f64)>,
    monospace_advances: (f64, usize),
    link_rects: Vec<(String, [f64; 4])>,
    /// Text gathered under each link, with the end of its last glyph.
    link_text: Vec<(String, Option<(f64, f64)>)>,
    pub(super) links: Vec<(String, String)>,
}

impl PageReader {
    pub(super) fn new(link_rects: Vec<(String, [f64; 4])>) -> PageReader {
        let link_text = vec![(String::new(), None); link_rects.len()];
        PageReader {
            lines: Vec::new(),
            current: None,
            monospace_advances: (0.0, 0),
            link_rects,
            link_text,
            links: Vec::new(),
        }
    }

    fn glyph(&mut self, glyph: PlacedGlyph<'_>) {
        let (dx, dy) = glyph.direction;
        // Coordinates along and across the text direction, so rotated pages read like upright
        // ones.
        let along = glyph.x * dx + glyph.y * dy;
        let across = -glyph.x * dy + glyph.y * dx;
        let same_line = match (self.current, self.lines.last()) {
            (Some((direction, end)), Some(line)) => {
                let tolerance = glyph.size.max(line.runs.last().map_or(0.0, |run| run.size));
                (direction.0 - dx).abs() < 0.01
                    && (direction.1 - dy).abs() < 0.01
                    && (across - line.baseline).abs() <= tolerance * 0.5
                    && along >= end - tolerance * 0.6
            }
            _ => false,
        };
        if !same_line {
            self.close_line();
            self.lines.push(Line {
                start: along,
                baseline: across,
                runs: Vec::new(),
                monospace_advance: 0.0,
            });
        }
        let Some(line) = self.lines.last_mut() else {
            return;
        };
        let mut text = String::new();
        if same_line && let Some((_, end)) = self.current {
            let gap = along - end;
            let previous_is_space = line
                .runs
                .last()
                .is_some_and(|run| run.text.ends_with(char::is_whitespace));
            if gap > glyph.size * 0.2
                && !previous_is_space
                && !glyph.text.starts_with(char::is_whitespace)
            {
                let previous_monospace = line.runs.last().is_some_and(|run| run.monospace);
                let spaces = if glyph.monospace && previous_monospace && glyph.advance > 0.0 {
                    ((gap / glyph.advance).round() as usize).clamp(1, 200)
                } else {
                    1
                };
                text.push_str(&" ".repeat(spaces));
            }
        }
        text.push_str(glyph.text);
        match line.runs.last_mut() {
            Some(run)
                if run.monospace == glyph.monospace && (run.size - glyph.size).abs() < 0.25 =>
            {
                run.text.push_str(&text);
            }
            _ => line.runs.push(Run {
                text,
                size: glyph.size,
                monospace: glyph.monospace,
            }),
        }
        if glyph.monospace && !glyph.text.trim().is_empty() && glyph.advance > 0.0 {
            self.monospace_advances.0 += glyph.advance;
            self.monospace_advances.1 += 1;
        }
        self.current = Some(((dx, dy), along + glyph.advance));

        if !glyph.text.trim().is_empty() {
            let centre = (
                glyph.x + dx * glyph.advance / 2.0 + (-dy) * glyph.size * 0.3,
                glyph.y + dy * glyph.advance / 2.0 + dx * glyph.size * 0.3,
            );
            for (index, (_, rect)) in self.link_rects.iter().enumerate() {
                if centre.0 >= rect[0]
                    && centre.0 <= rect[2]
                    && centre.1 >= rect[1]
                    && centre.1 <= rect[3]
                {
                    let (text, last) = &mut self.link_text[index];
                    if let Some((last_along, last_across)) = *last
                        && ((across - last_across).abs() > glyph.size * 0.5
                            || along - last_along > glyph.size * 0.2)
                        && !text.ends_with(' ')
                    {
                        text.push(' ');
                    }
                    if text.len() < 1000 {
                        text.push_str(glyph.text);
                    }
                    *last = Some((along + glyph.advance, across));
                }
            }
        }
    }

    fn close_line(&mut self) {
        if let Some(line) = self.lines.last_mut() {
            let (sum, count) = self.monospace_advances;
            line.monospace_advance = if count > 0 { sum / count as f64 } else { 0.0 };
        }
        self.monospace_advances = (0.0, 0);
        self.current = None;
    }

    pub(super) fn finish(mut self) -> PageReader {
        self.close_line();
        let texts = std::mem::take(&mut self.link_text);
        self.links = self
            .link_rects
            .iter()
            .zip(texts)
            .map(|((uri, _), (text, _))| (uri.clone(), text))
            .collect();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_compose_in_pdf_order() {
        let scale = Matrix([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let moved = Matrix::translate(10.0, 5.0).then(scale);
        assert_eq!(moved, Matrix([2.0, 0.0, 0.0, 2.0, 20.0, 10.0]));
    }
}
