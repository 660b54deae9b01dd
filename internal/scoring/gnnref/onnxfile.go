package gnnref

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

var errNotFloat = errors.New("not a float tensor")

// Tensor is one float initializer of an ONNX model.
type Tensor struct {
	Dims []int
	Data []float32
}

// ONNX protobuf field numbers (onnx.proto): ModelProto.graph = 7,
// GraphProto.initializer = 5, TensorProto.dims = 1, data_type = 2,
// float_data = 4, name = 8, raw_data = 9. FLOAT is data type 1.
const (
	modelGraph       = 7
	graphInitializer = 5
	tensorDims       = 1
	tensorDataType   = 2
	tensorFloatData  = 4
	tensorName       = 8
	tensorRawData    = 9
	dataTypeFloat    = 1
)

// Initializers reads the float initializers of an ONNX model file's main
// graph; initializers of other types (axes, shapes) are left out. It is a minimal protobuf reader, so the reference needs no ML
// framework and no generated code.
func Initializers(model []byte) (map[string]Tensor, error) {
	var graph []byte
	err := fields(model, func(num int, wire int, _ uint64, b []byte) error {
		if num == modelGraph && wire == 2 {
			graph = b
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("onnx model: %w", err)
	}
	if graph == nil {
		return nil, errors.New("onnx model: no graph")
	}
	out := map[string]Tensor{}
	err = fields(graph, func(num int, wire int, _ uint64, b []byte) error {
		if num != graphInitializer || wire != 2 {
			return nil
		}
		name, t, err := tensor(b)
		if errors.Is(err, errNotFloat) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("initializer %q: %w", name, err)
		}
		out[name] = t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("onnx graph: %w", err)
	}
	return out, nil
}

func tensor(b []byte) (string, Tensor, error) {
	var (
		name     string
		t        Tensor
		dtype    uint64
		raw      []byte
		hasFloat bool
	)
	err := fields(b, func(num int, wire int, v uint64, p []byte) error {
		switch {
		case num == tensorDims && wire == 0:
			t.Dims = append(t.Dims, int(v))
		case num == tensorDims && wire == 2:
			for len(p) > 0 {
				x, n := binary.Uvarint(p)
				if n <= 0 {
					return errors.New("bad packed dims")
				}
				t.Dims = append(t.Dims, int(x))
				p = p[n:]
			}
		case num == tensorDataType && wire == 0:
			dtype = v
		case num == tensorFloatData && wire == 2:
			hasFloat = true
			for ; len(p) >= 4; p = p[4:] {
				t.Data = append(t.Data, math.Float32frombits(binary.LittleEndian.Uint32(p)))
			}
		case num == tensorName && wire == 2:
			name = string(p)
		case num == tensorRawData && wire == 2:
			raw = p
		}
		return nil
	})
	if err != nil {
		return name, t, err
	}
	if dtype != dataTypeFloat {
		return name, t, errNotFloat
	}
	if !hasFloat {
		if len(raw)%4 != 0 {
			return name, t, fmt.Errorf("raw data of %d bytes", len(raw))
		}
		t.Data = make([]float32, len(raw)/4)
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	size := 1
	for _, d := range t.Dims {
		size *= d
	}
	if size != len(t.Data) {
		return name, t, fmt.Errorf("dims %v hold %d values, data has %d", t.Dims, size, len(t.Data))
	}
	return name, t, nil
}

// fields walks the top-level fields of one protobuf message. For wire type 0
// v holds the value; for wire type 2 b holds the bytes.
func fields(m []byte, fn func(num, wire int, v uint64, b []byte) error) error {
	for len(m) > 0 {
		key, n := binary.Uvarint(m)
		if n <= 0 {
			return errors.New("bad field key")
		}
		m = m[n:]
		num, wire := int(key>>3), int(key&7)
		switch wire {
		case 0:
			v, n := binary.Uvarint(m)
			if n <= 0 {
				return errors.New("bad varint")
			}
			m = m[n:]
			if err := fn(num, wire, v, nil); err != nil {
				return err
			}
		case 1:
			if len(m) < 8 {
				return errors.New("truncated fixed64")
			}
			m = m[8:]
		case 2:
			l, n := binary.Uvarint(m)
			if n <= 0 || uint64(len(m)-n) < l {
				return errors.New("truncated length-delimited field")
			}
			b := m[n : n+int(l)]
			m = m[n+int(l):]
			if err := fn(num, wire, 0, b); err != nil {
				return err
			}
		case 5:
			if len(m) < 4 {
				return errors.New("truncated fixed32")
			}
			m = m[4:]
		default:
			return fmt.Errorf("unsupported wire type %d", wire)
		}
	}
	return nil
}
