"""device-info's CPU name from /proc/cpuinfo texts: an arm64 kernel prints no `model name`, only each core's
implementer and part, which are named as lscpu names them."""
from device.info.cpu_name import cpu_name

ARM_CORE = ("processor\t: {i}\nBogoMIPS\t: 26.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"
            "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x{v}\nCPU part\t: {part}\n"
            "CPU revision\t: 0\n\n")


def test_a_big_little_arm64_board_is_named_by_its_clusters():
    # an MT8189-family layout: six little cores listed first, then two big ones
    text = "".join(ARM_CORE.format(i=i, v=2 if i < 6 else 1, part="0xd05" if i < 6 else "0xd41") for i in range(8))
    assert cpu_name(text) == "6x Cortex-A55 + 2x Cortex-A78"


def test_an_unlisted_part_or_implementer_keeps_its_numbers():
    assert cpu_name(ARM_CORE.format(i=0, v=0, part="0xdff")) == "1x Arm part 0xdff"
    other = ARM_CORE.format(i=0, v=0, part="0x802").replace("0x41", "0x51")
    assert cpu_name(other) == "1x implementer 0x51 part 0x802"


def test_x86_model_name_and_old_arm_hardware_lines():
    assert cpu_name("processor\t: 0\nmodel name\t: AMD EPYC 9R14 96-Core Processor\n") == \
        "AMD EPYC 9R14 96-Core Processor"
    assert cpu_name("Processor\t: AArch64 Processor rev 4 (aarch64)\nHardware\t: MT8183\n") == "MT8183"
    assert cpu_name("") is None
