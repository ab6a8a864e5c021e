"""Reading collectives and their bytes from compiled HLO text (the three replica-group forms)."""
import pytest

from spmdkit.reshard.hlo_collectives import collective_bytes, count_collectives, read_collectives

HLO = """
ENTRY %main {
  %param = f32[4,16]{1,0} parameter(0)
  %all-gather = f32[8,16]{1,0} all-gather(%param), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}, dimensions={0}, use_global_device_ids=true
  %rs = f32[2,16]{1,0} reduce-scatter(%all-gather), channel_id=2, replica_groups=[2,4]<=[8], dimensions={0}, to_apply=%add
  %ar = f32[2,16]{1,0} all-reduce(%rs), channel_id=3, replica_groups={{0,1},{2,3},{4,5},{6,7}}, to_apply=%add
  %a2a = (f32[4,1,1,2]{3,2,1,0}, f32[4,1,1,2]{3,2,1,0}) all-to-all(%x, %y), channel_id=4, replica_groups=mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(0,2,1)) {'axis_0':(2)2}
  %cp = f32[2,8]{1,0} collective-permute(%ar), channel_id=5, source_target_pairs={{0,0},{2,4},{4,2}}
  %cp2 = f32[2,8]{1,0} collective-permute(%ar), channel_id=6, source_target_pairs={{0,0},{1,1}}
  ROOT %ag-start = (f32[2,16]{1,0}, f32[4,16]{1,0}) all-gather-start(%ar), channel_id=7, replica_groups={{0,1}}, dimensions={0}
  %ag-done = f32[4,16]{1,0} all-gather-done(%ag-start)
}
"""


def test_kinds_group_sizes_and_bytes():
    got = [(c.kind, c.group_size, c.bytes) for c in read_collectives(HLO)]
    assert got[:5] == [
        ("all_gather", 2, 256.0),            # receives the other half of 512 bytes
        ("reduce_scatter", 4, 384.0),        # 3/4 of its 512-byte operand
        ("all_reduce", 2, 128.0),            # 2 * 1/2 * 128 bytes
        ("all_to_all", 2, 32.0),             # 1/2 of 2 * 32 bytes, over the sub-axis of size 2
        ("collective_permute", 2, 64.0),     # moves its whole result
    ]
    assert got[5] == ("collective_permute", 2, 0.0)   # every device sends to itself: nothing moves
    assert got[6] == ("all_gather", 2, 128.0)     # an async start counts once (its result), done not
    counts = count_collectives(HLO)
    assert counts == {"all_gather": 2, "reduce_scatter": 1, "all_reduce": 1, "all_to_all": 1,
                      "collective_permute": 2}
    assert collective_bytes(HLO) == sum(c.bytes for c in read_collectives(HLO))


def test_unreadable_replica_groups_are_an_error():
    bad = "  %ar = f32[4]{0} all-reduce(%p), channel_id=1, to_apply=%add\n"
    with pytest.raises(ValueError, match="replica groups"):
        read_collectives(bad)
