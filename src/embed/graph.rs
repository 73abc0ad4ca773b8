//! One rewrite of an ONNX model's graph, on its protobuf bytes, before ONNX Runtime loads it.
//!
//! Quantised models such as the int8 MiniLM dequantise their token table by hand,
//! `Gather(Mul(Cast(table_int8), scales), ids)`. ONNX Runtime's constant folding turns the table
//! into float: 47 MB resident for MiniLM's 30522 × 384 table, a third of the process. Gathering
//! first, `Mul(Cast(Gather(table_int8, ids)), Gather(scales, ids))`, is the same arithmetic per
//! row with per-row scales, and keeps the table in int8 (11.7 MB).
//!
//! Only the protobuf wire format is read: every field this code does not change is copied as it
//! was, so the rest of the model is untouched. Anything unexpected leaves the model as it is.

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
    let mut out = Vec::new();
    for input in inputs {
        write_bytes(&mut out, 1, input.as_bytes());
    }
    write_bytes(&mut out, 2, output.as_bytes());
    write_bytes(&mut out, 3, format!("quire_{output}").as_bytes());
    write_bytes(&mut out, 4, op_type.as_bytes());
    for attribute in attributes {
        write_bytes(&mut out, 5, attribute);
    }
    out
}

/// `to = FLOAT` for a Cast node (AttributeProto: name 1, i 3, type 20 = INT).
fn cast_to_float() -> Vec<u8> {
    let mut out = Vec::new();
    write_bytes(&mut out, 1, b"to");
    write_varint(&mut out, 3 << 3);
    write_varint(&mut out, 1);
    write_varint(&mut out, 20 << 3);
    write_varint(&mut out, 2);
    out
}

/// The model with every `Gather(Mul(Cast(int8), scales), ids)` gathering first, or `None` when
/// it has no such pattern (or cannot be read).
pub fn gather_before_dequantize(model: &[u8]) -> Option<Vec<u8>> {
    let fields = parse(model)?;
    // ModelProto.graph is field 7; GraphProto.node is field 1.
    let graph_at = fields.iter().position(|f| f.number == 7 && f.wire == 2)?;
    let graph = parse(fields[graph_at].payload)?;
    let nodes: Vec<Option<Node<'_>>> = graph
        .iter()
        .map(|f| {
            (f.number == 1 && f.wire == 2)
                .then(|| node(f.payload))
                .flatten()
        })
        .collect();
    let producer = |name: &str| {
        nodes
            .iter()
            .position(|n| n.as_ref().is_some_and(|n| n.outputs.contains(&name)))
    };
    let uses = |name: &str| {
        nodes
            .iter()
            .flatten()
            .flat_map(|n| n.inputs.iter())
            .filter(|input| **input == name)
            .count()
    };
    // For each matching Gather: (gather index, mul index, cast index, int8 table, scales).
    let mut rewrites = Vec::new();
    for (at, candidate) in nodes.iter().enumerate() {
        let Some(gather) = candidate else { continue };
        if gather.op_type != "Gather" || !gather.domain.is_empty() || gather.inputs.len() != 2 {
            continue;
        }
        let Some(mul_at) = producer(gather.inputs[0]) else {
            continue;
        };
        let Some(mul) = nodes[mul_at].as_ref() else {
            continue;
        };
        if mul.op_type != "Mul" || mul.inputs.len() != 2 || uses(gather.inputs[0]) != 1 {
            continue;
        }
        let Some(cast_at) = producer(mul.inputs[0]) else {
            continue;
        };
        let Some(cast) = nodes[cast_at].as_ref() else {
            continue;
        };
        // The scales and the int8 table must be initializers (no producer), the cast used once.
        if cast.op_type != "Cast"
            || cast.inputs.len() != 1
            || uses(mul.inputs[0]) != 1
            || producer(cast.inputs[0]).is_some()
            || producer(mul.inputs[1]).is_some()
            || !gather.attributes.iter().all(|a| gathers_rows(a))
        {
            continue;
        }
        rewrites.push((at, mul_at, cast_at));
    }
    if rewrites.is_empty() {
        return None;
    }
    let mut replaced: std::collections::HashMap<usize, Vec<Vec<u8>>> = Default::default();
    let mut dropped = std::collections::HashSet::new();
    for &(at, mul_at, cast_at) in &rewrites {
        let (gather, mul, cast) = (
            nodes[at].as_ref()?,
            nodes[mul_at].as_ref()?,
            nodes[cast_at].as_ref()?,
        );
        let (table, scales, ids, output) = (
            cast.inputs[0],
            mul.inputs[1],
            gather.inputs[1],
            gather.outputs.first()?,
        );
        let attributes: Vec<Vec<u8>> = gather.attributes.iter().map(|a| a.to_vec()).collect();
        let rows = format!("{output}_int8_rows");
        let floats = format!("{output}_float_rows");
        let row_scales = format!("{output}_row_scales");
        replaced.insert(
            at,
            vec![
                encode_node(&[table, ids], &rows, "Gather", &attributes),
                encode_node(&[&rows], &floats, "Cast", &[cast_to_float()]),
                encode_node(&[scales, ids], &row_scales, "Gather", &attributes),
                encode_node(&[&floats, &row_scales], output, "Mul", &[]),
            ],
        );
        dropped.insert(mul_at);
        dropped.insert(cast_at);
    }
    let mut new_graph = Vec::with_capacity(fields[graph_at].payload.len());
    for (at, field) in graph.iter().enumerate() {
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
    let mut out = Vec::with_capacity(model.len());
    for (at, field) in fields.iter().enumerate() {
        if at == graph_at {
            write_bytes(&mut out, 7, &new_graph);
        } else {
            write_field(&mut out, field);
        }
    }
    Some(out)
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
