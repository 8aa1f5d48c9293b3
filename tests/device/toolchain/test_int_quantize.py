"""Integer recipes (device/toolchain/int_quantize.py): a spec names the base and the parts left in float or
given other bits, and builds the quantizer's recipe for the real step graph; bad specs get one clear line."""
import pytest

from core.errors import ModelError
from device.toolchain.int_quantize import MIXED, Recipe


def test_a_spec_names_the_base_and_its_parts():
    assert Recipe.parse("a16w8") == Recipe(16, {})
    assert Recipe.parse("a8w8,SOFTMAX=float,block3=16") == Recipe(8, {"SOFTMAX": None, "block3": 16})
    assert Recipe.parse("float,head=16,headroom=4") == Recipe(None, {"head": 16}, 4.0)
    assert Recipe.named("a16w8") == Recipe.parse("a16w8,layer_norm=float") == Recipe(16, {"layer_norm": None})


@pytest.mark.parametrize("spec", ["a4w8", "a16w8,SOFTMAX", "a16w8,block1=4", "a16w8,headroom=0.5", "mixed"])
def test_a_bad_spec_is_one_clear_error(spec):
    with pytest.raises(ModelError) as err:
        Recipe.named(spec)
    assert "\n" not in str(err.value) and err.value.fix


@pytest.fixture(scope="module")
def step(model):
    from device.graphs.tflite_graphs import build_decoder_step_tflite

    return build_decoder_step_tflite(model.weights.params, model.weights.dims)


def test_the_built_recipe_keeps_the_named_op_kind_in_float_after_every_group(step):
    pytest.importorskip("ai_edge_quantizer")
    built = Recipe.parse("a16w8,block2=8,SOFTMAX=float").build(step, "decoder_step")
    first = built[0]
    assert (first["regex"], first["operation"], first["algorithm_key"]) == (".*", "*", "min_max_uniform_quantize")
    assert built[1]["regex"].startswith("^(") and built[1]["op_config"]["activation_tensor_config"]["num_bits"] == 8
    assert built[-1]["operation"] == "SOFTMAX" and built[-1]["algorithm_key"] == "no_quantize"
    with pytest.raises(ModelError, match="no layer group block9"):
        Recipe.parse("a16w8,block9=float").build(step, "decoder_step")
    with pytest.raises(ModelError, match="no op kind"):
        Recipe.parse("a16w8,NOT_AN_OP=float").build(step, "decoder_step")


def test_mixed_quantizes_the_steps_head_and_with_kv_its_first_blocks_and_leaves_the_rest_in_float():
    r = Recipe.named(MIXED["kv"]["decoder_step"])
    assert r.act_bits is None and r.headroom == 4
    assert r.overrides == {"block0": 16, "block1": 16, "head": 16, "layer_norm": None}
    assert Recipe.named(MIXED["absorbed"]["decoder_step"]).overrides == {"head": 16, "layer_norm": None}
    assert MIXED["kv"]["encoder"] is None is MIXED["absorbed"]["encoder"]
