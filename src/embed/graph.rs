//! Rewrites of an ONNX model's graph, on its protobuf bytes, before ONNX Runtime loads it.
//!
//! Quantised models such as the int8 MiniLM dequantise their weights by hand,
//! `Mul(Cast(w_int8), scales)`, in front of the token-table `Gather` and of every `MatMul`.
//! ONNX Runtime's constant folding turns those weights into float copies that stay resident (47 MB
//! for MiniLM's 30522 × 384 token table alone) and then multiplies in fp32.
//! `gather_before_dequantize` gathers the table's rows first, which is the same arithmetic and
//! keeps the table in int8; `integer_matmuls` multiplies in integers against the int8 weights.
//!
//! Only the protobuf wire format is read: every field this code does not change is copied as it
//! was, so the rest of the model is untouched. Anything unexpected leaves the model as it is.

use std::collections::{HashMap, HashSet};

/// One protobuf field: its number, wire type and raw payload (without the key).
#[derive(Debug, Clone)]
struct Field<'a> {
    number: u64,
    wire: u8,
    payload: &'a [u8],
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn parse(bytes: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut fields = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let key = read_varint(bytes, &mut at)?;
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let (start, end) = match wire {
            0 => {
                let start = at;
                read_varint(bytes, &mut at)?;
                (start, at)
            }
            1 => (at, at.checked_add(8)?),
            2 => {
                let length = usize::try_from(read_varint(bytes, &mut at)?).ok()?;
                (at, at.checked_add(length)?)
            }
            5 => (at, at.checked_add(4)?),
            _ => return None,
        };
        at = end;
        fields.push(Field {
            number,
            wire,
            payload: bytes.get(start..end)?,
        });
    }
    Some(fields)
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn write_field(out: &mut Vec<u8>, field: &Field<'_>) {
    write_varint(out, (field.number << 3) | u64::from(field.wire));
    if field.wire == 2 {
        write_varint(out, field.payload.len() as u64);
    }
    out.extend_from_slice(field.payload);
}

fn write_bytes(out: &mut Vec<u8>, number: u64, payload: &[u8]) {
    write_field(
        out,
        &Field {
            number,
            wire: 2,
            payload,
        },
    );
}

/// The parts of a NodeProto this rewrite reads.
struct Node<'a> {
    inputs: Vec<&'a str>,
    outputs: Vec<&'a str>,
    op_type: &'a str,
    /// Attribute messages (field 5), raw.
    attributes: Vec<&'a [u8]>,
    domain: &'a str,
}

fn node(bytes: &[u8]) -> Option<Node<'_>> {
    let mut node = Node {
        inputs: Vec::new(),
        outputs: Vec::new(),
        op_type: "",
        attributes: Vec::new(),
        domain: "",
    };
    for field in parse(bytes)? {
        let text = || std::str::from_utf8(field.payload).ok();
        match (field.number, field.wire) {
            (1, 2) => node.inputs.push(text()?),
            (2, 2) => node.outputs.push(text()?),
            (4, 2) => node.op_type = text()?,
            (5, 2) => node.attributes.push(field.payload),
            (7, 2) => node.domain = text()?,
            _ => {}
        }
    }
    Some(node)
}

fn encode_node(inputs: &[&str], output: &str, op_type: &str, attributes: &[Vec<u8>]) -> Vec<u8> {
    encode_node_outputs(inputs, &[output], op_type, attributes)
}

fn encode_node_outputs(
    inputs: &[&str],
    outputs: &[&str],
    op_type: &str,
    attributes: &[Vec<u8>],
) -> Vec<u8> {
    let mut out = Vec::new();
    for input in inputs {
        write_bytes(&mut out, 1, input.as_bytes());
    }
    for output in outputs {
        write_bytes(&mut out, 2, output.as_bytes());
    }
    let first = outputs.first().copied().unwrap_or_default();
    write_bytes(&mut out, 3, format!("quire_{first}").as_bytes());
    write_bytes(&mut out, 4, op_type.as_bytes());
    for attribute in attributes {
        write_bytes(&mut out, 5, attribute);
    }
    out
}

/// TensorProto element type codes.
const FLOAT: u64 = 1;
const UINT8: u64 = 2;
const INT8: u64 = 3;

/// `to = element type` for a Cast node (AttributeProto: name 1, i 3, type 20 = INT).
fn cast_to(element: u64) -> Vec<u8> {
    let mut out = Vec::new();
    write_bytes(&mut out, 1, b"to");
    write_varint(&mut out, 3 << 3);
    write_varint(&mut out, element);
    write_varint(&mut out, 20 << 3);
    write_varint(&mut out, 2);
    out
}

/// `axes = [-1]` for a ReduceMax node of opset 17 or below (AttributeProto: name 1, ints 8,
/// type 20 = INTS); `keepdims` is left at its default, 1.
fn last_axis() -> Vec<u8> {
    let mut out = Vec::new();
    write_bytes(&mut out, 1, b"axes");
    write_varint(&mut out, 8 << 3);
    write_varint(&mut out, -1_i64 as u64);
    write_varint(&mut out, 20 << 3);
    write_varint(&mut out, 7);
    out
}

/// A `Constant` node whose output `name` is the scalar of `element` type with these
/// little-endian bytes (AttributeProto `value`: t 5, type 20 = TENSOR; TensorProto: data_type 2,
/// raw_data 9, no dims).
fn constant(name: &str, element: u64, raw: &[u8]) -> Vec<u8> {
    let mut tensor = Vec::new();
    write_varint(&mut tensor, 2 << 3);
    write_varint(&mut tensor, element);
    write_bytes(&mut tensor, 8, name.as_bytes());
    write_bytes(&mut tensor, 9, raw);
    let mut attribute = Vec::new();
    write_bytes(&mut attribute, 1, b"value");
    write_bytes(&mut attribute, 5, &tensor);
    write_varint(&mut attribute, 20 << 3);
    write_varint(&mut attribute, 4);
    encode_node(&[], name, "Constant", &[attribute])
}

/// A model opened for rewriting: the model's fields, its graph's fields, and the node each graph
/// field holds.
struct View<'a> {
    fields: Vec<Field<'a>>,
    graph_at: usize,
    graph: Vec<Field<'a>>,
    nodes: Vec<Option<Node<'a>>>,
}

/// What a rewrite reads of an initializer (TensorProto): its element type and shape.
struct Initializer {
    data_type: u64,
    dims: Vec<u64>,
}

impl<'a> View<'a> {
    fn open(model: &'a [u8]) -> Option<View<'a>> {
        let fields = parse(model)?;
        // ModelProto.graph is field 7; GraphProto.node is field 1.
        let graph_at = fields.iter().position(|f| f.number == 7 && f.wire == 2)?;
        let graph = parse(fields[graph_at].payload)?;
        let nodes = graph
            .iter()
            .map(|f| {
                (f.number == 1 && f.wire == 2)
                    .then(|| node(f.payload))
                    .flatten()
            })
            .collect();
        Some(View {
            fields,
            graph_at,
            graph,
            nodes,
        })
    }

    fn node(&self, at: usize) -> Option<&Node<'a>> {
        self.nodes.get(at)?.as_ref()
    }

    /// The node that computes `name`, if a node does (an initializer or input has none).
    fn producer(&self, name: &str) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.as_ref().is_some_and(|n| n.outputs.contains(&name)))
    }

    /// How many node inputs read `name`.
    fn uses(&self, name: &str) -> usize {
        self.nodes
            .iter()
            .flatten()
            .flat_map(|n| n.inputs.iter())
            .filter(|input| **input == name)
            .count()
    }

    /// The initializer (GraphProto field 5) called `name`, unless a node computes that name.
    fn initializer(&self, name: &str) -> Option<Initializer> {
        if self.producer(name).is_some() {
            return None;
        }
        self.graph
            .iter()
            .filter(|f| f.number == 5 && f.wire == 2)
            .find_map(|f| {
                let fields = parse(f.payload)?;
                let named = fields
                    .iter()
                    .any(|t| t.number == 8 && t.wire == 2 && t.payload == name.as_bytes());
                named.then(|| tensor_header(&fields)).flatten()
            })
    }

    /// The model again, with the nodes at the `replaced` positions swapped for new ones and the
    /// `dropped` ones left out; every other byte as it was.
    fn rebuild(
        &self,
        replaced: &HashMap<usize, Vec<Vec<u8>>>,
        dropped: &HashSet<usize>,
        capacity: usize,
    ) -> Vec<u8> {
        let mut new_graph = Vec::with_capacity(self.fields[self.graph_at].payload.len());
        for (at, field) in self.graph.iter().enumerate() {
            if dropped.contains(&at) {
                continue;
            }
            match replaced.get(&at) {
                Some(new_nodes) => {
                    for bytes in new_nodes {
                        write_bytes(&mut new_graph, 1, bytes);
                    }
                }
                None => write_field(&mut new_graph, field),
            }
        }
        let mut out = Vec::with_capacity(capacity);
        for (at, field) in self.fields.iter().enumerate() {
            if at == self.graph_at {
                write_bytes(&mut out, 7, &new_graph);
            } else {
                write_field(&mut out, field);
            }
        }
        out
    }

    /// For a node input computed as `Mul(Cast(int8 initializer), scales initializer)` and read
    /// by that one node: the pattern's nodes and initializers.
    fn dequantized(&self, name: &str) -> Option<Dequantized<'a>> {
        let mul_at = self.producer(name)?;
        let mul = self.node(mul_at)?;
        if mul.op_type != "Mul" || !mul.domain.is_empty() || mul.inputs.len() != 2 {
            return None;
        }
        let cast_at = self.producer(mul.inputs[0])?;
        let cast = self.node(cast_at)?;
        if cast.op_type != "Cast"
            || cast.inputs.len() != 1
            || self.uses(name) != 1
            || self.uses(mul.inputs[0]) != 1
        {
            return None;
        }
        let weights = self.initializer(cast.inputs[0])?;
        let scales = self.initializer(mul.inputs[1])?;
        (weights.data_type == INT8).then_some(Dequantized {
            mul_at,
            cast_at,
            weights: cast.inputs[0],
            scales: mul.inputs[1],
            weight_dims: weights.dims,
            scale_dims: scales.dims,
        })
    }
}

/// A `Mul(Cast(int8 initializer), scales initializer)` found by `View::dequantized`.
struct Dequantized<'a> {
    mul_at: usize,
    cast_at: usize,
    weights: &'a str,
    scales: &'a str,
    weight_dims: Vec<u64>,
    scale_dims: Vec<u64>,
}

/// Element type (field 2) and dims (field 1, packed or not) of a TensorProto's fields.
fn tensor_header(fields: &[Field<'_>]) -> Option<Initializer> {
    let mut header = Initializer {
        data_type: 0,
        dims: Vec::new(),
    };
    for field in fields {
        match (field.number, field.wire) {
            (1, 0) => header.dims.push(read_varint(field.payload, &mut 0)?),
            (1, 2) => {
                let mut at = 0;
                while at < field.payload.len() {
                    header.dims.push(read_varint(field.payload, &mut at)?);
                }
            }
            (2, 0) => header.data_type = read_varint(field.payload, &mut 0)?,
            _ => {}
        }
    }
    Some(header)
}

/// The model with every `Gather(Mul(Cast(int8), scales), ids)` gathering first, or `None` when
/// it has no such pattern (or cannot be read).
pub fn gather_before_dequantize(model: &[u8]) -> Option<Vec<u8>> {
    let view = View::open(model)?;
    let mut replaced: HashMap<usize, Vec<Vec<u8>>> = HashMap::new();
    let mut dropped = HashSet::new();
    for (at, candidate) in view.nodes.iter().enumerate() {
        let Some(gather) = candidate else { continue };
        if gather.op_type != "Gather"
            || !gather.domain.is_empty()
            || gather.inputs.len() != 2
            || !gather.attributes.iter().all(|a| gathers_rows(a))
        {
            continue;
        }
        let Some(Dequantized {
            mul_at,
            cast_at,
            weights: table,
            scales,
            ..
        }) = view.dequantized(gather.inputs[0])
        else {
            continue;
        };
        let (ids, output) = (gather.inputs[1], gather.outputs.first()?);
        let attributes: Vec<Vec<u8>> = gather.attributes.iter().map(|a| a.to_vec()).collect();
        let rows = format!("{output}_int8_rows");
        let floats = format!("{output}_float_rows");
        let row_scales = format!("{output}_row_scales");
        replaced.insert(
            at,
            vec![
                encode_node(&[table, ids], &rows, "Gather", &attributes),
                encode_node(&[&rows], &floats, "Cast", &[cast_to(FLOAT)]),
                encode_node(&[scales, ids], &row_scales, "Gather", &attributes),
                encode_node(&[&floats, &row_scales], output, "Mul", &[]),
            ],
        );
        dropped.insert(mul_at);
        dropped.insert(cast_at);
    }
    if replaced.is_empty() {
        return None;
    }
    Some(view.rebuild(&replaced, &dropped, model.len()))
}

/// The model with every `MatMul(x, Mul(Cast(w_int8), scales))` whose scales are per output
/// column computed in integers, or `None` when it has no such pattern (or cannot be read).
/// Each row of `x` (one token's activations) is quantised on its own, symmetric around 0:
/// `q = round(x × 127 / max|x|)`, shifted by 128 into `u8` (once per distinct `x`); the int8
/// weights are used as stored (`MatMulInteger`, int32 sums), and the sums are scaled back by the
/// row's `max|x| / 127` times the column scales. Both scales factor out of each sum, so the only
/// new error is each activation's rounding to 8 bits. A row scale, unlike one for the whole
/// tensor (`DynamicQuantizeLinear`), keeps a text's vector independent of the other texts in its
/// batch and of their padding. The weights are never cast to float, so the float copies ONNX
/// Runtime's constant folding made of them (about 30 MB for MiniLM) are gone.
pub fn integer_matmuls(model: &[u8]) -> Option<Vec<u8>> {
    let view = View::open(model)?;
    let mut replaced: HashMap<usize, Vec<Vec<u8>>> = HashMap::new();
    let mut dropped = HashSet::new();
    // Each distinct left operand is quantised once, before its first MatMul.
    let mut quantized: HashMap<&str, (String, String)> = HashMap::new();
    for (at, candidate) in view.nodes.iter().enumerate() {
        let Some(matmul) = candidate else { continue };
        if matmul.op_type != "MatMul" || !matmul.domain.is_empty() || matmul.inputs.len() != 2 {
            continue;
        }
        let Some(Dequantized {
            mul_at,
            cast_at,
            weights,
            scales,
            weight_dims,
            scale_dims,
        }) = view.dequantized(matmul.inputs[1])
        else {
            continue;
        };
        let [_, columns] = weight_dims[..] else {
            continue;
        };
        if !per_column(&scale_dims, columns) {
            continue;
        }
        let (input, output) = (matmul.inputs[0], matmul.outputs.first()?);
        let mut new_nodes = Vec::new();
        if replaced.is_empty() {
            new_nodes.extend(quantization_constants());
        }
        let (codes, row_scales) = match quantized.get(input) {
            Some(known) => known.clone(),
            None => {
                let (nodes, codes, row_scales) = quantize_rows(input);
                new_nodes.extend(nodes);
                quantized.insert(input, (codes.clone(), row_scales.clone()));
                (codes, row_scales)
            }
        };
        let sums = format!("{output}_quire_int32");
        let floats = format!("{output}_quire_sums");
        let scaled = format!("{output}_quire_row_scaled");
        new_nodes.extend([
            encode_node(&[&codes, weights, ZERO_POINT], &sums, "MatMulInteger", &[]),
            encode_node(&[&sums], &floats, "Cast", &[cast_to(FLOAT)]),
            encode_node(&[&floats, &row_scales], &scaled, "Mul", &[]),
            encode_node(&[&scaled, scales], output, "Mul", &[]),
        ]);
        replaced.insert(at, new_nodes);
        dropped.insert(mul_at);
        dropped.insert(cast_at);
    }
    if replaced.is_empty() {
        return None;
    }
    Some(view.rebuild(&replaced, &dropped, model.len()))
}

/// Names of the constants `integer_matmuls` adds once, before the first rewritten product.
const ZERO_POINT: &str = "quire_q_zero_point";
const LEVELS: &str = "quire_q_levels";
const SHIFT: &str = "quire_q_shift";
const TINY: &str = "quire_q_tiny";

/// The constants of the row quantisation: 128 as the `u8` zero point and as a float shift, 127
/// quantisation steps either side of 0, and a floor under `max|x|` so a row of zeros divides by
/// something.
fn quantization_constants() -> [Vec<u8>; 4] {
    [
        constant(ZERO_POINT, UINT8, &[128]),
        constant(LEVELS, FLOAT, &127.0_f32.to_le_bytes()),
        constant(SHIFT, FLOAT, &128.0_f32.to_le_bytes()),
        constant(TINY, FLOAT, &1e-20_f32.to_le_bytes()),
    ]
}

/// The nodes that quantise each row of `input` to `u8` codes (zero point 128), and the names of
/// the codes and of the rows' scales (`max|x| / 127`, shaped `[.., 1]`).
fn quantize_rows(input: &str) -> (Vec<Vec<u8>>, String, String) {
    let name = |part: &str| format!("{input}_quire_{part}");
    let (abs, peak, floor, step, inverse) = (
        name("abs"),
        name("peak"),
        name("peak_floor"),
        name("row_scale"),
        name("inverse_scale"),
    );
    let (scaled, rounded, shifted, codes) =
        (name("scaled"), name("rounded"), name("shifted"), name("u8"));
    let nodes = vec![
        encode_node(&[input], &abs, "Abs", &[]),
        encode_node(&[&abs], &peak, "ReduceMax", &[last_axis()]),
        encode_node(&[&peak, TINY], &floor, "Max", &[]),
        encode_node(&[&floor, LEVELS], &step, "Div", &[]),
        encode_node(&[LEVELS, &floor], &inverse, "Div", &[]),
        encode_node(&[input, &inverse], &scaled, "Mul", &[]),
        encode_node(&[&scaled], &rounded, "Round", &[]),
        encode_node(&[&rounded, SHIFT], &shifted, "Add", &[]),
        encode_node(&[&shifted], &codes, "Cast", &[cast_to(UINT8)]),
    ];
    (nodes, codes, step)
}

/// Whether scales of this shape vary only along the last axis of a `[rows, columns]` weight:
/// a scalar, `[columns]` or `[1, columns]` (or `[1]`).
fn per_column(scale_shape: &[u64], columns: u64) -> bool {
    match scale_shape {
        [] | [1] => true,
        [n] | [1, n] => *n == columns,
        _ => false,
    }
}

/// Whether a Gather attribute keeps the rewrite valid: only `axis = 0` (rows) is.
fn gathers_rows(attribute: &[u8]) -> bool {
    let Some(fields) = parse(attribute) else {
        return false;
    };
    let name = fields
        .iter()
        .find(|f| f.number == 1 && f.wire == 2)
        .map(|f| f.payload);
    if name != Some(b"axis".as_slice()) {
        return true;
    }
    fields
        .iter()
        .find(|f| f.number == 3 && f.wire == 0)
        .is_none_or(|f| f.payload == [0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_byte_for_byte() {
        let mut bytes = Vec::new();
        write_bytes(&mut bytes, 1, b"hello");
        write_varint(&mut bytes, 2 << 3);
        write_varint(&mut bytes, 300);
        bytes.extend_from_slice(&[(3 << 3) | 5, 1, 2, 3, 4]);
        let fields = parse(&bytes).expect("parses");
        assert_eq!(fields.len(), 3);
        let mut again = Vec::new();
        for field in &fields {
            write_field(&mut again, field);
        }
        assert_eq!(again, bytes);
    }

    #[test]
    fn truncated_or_garbage_input_is_left_alone() {
        assert!(gather_before_dequantize(&[]).is_none());
        assert!(gather_before_dequantize(&[0x3a, 0x05, 1]).is_none());
        assert!(gather_before_dequantize(&[0xff; 16]).is_none());
    }
}
