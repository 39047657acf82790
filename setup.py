"""pip install of the ROS-free parts (engine, geometry, evaluation, CLI).

On a robot the package is built with colcon (ament_cmake, see CMakeLists.txt), which also generates
the msg/srv Python modules; this file is for users without ROS and for the CI virtual environment.
"""

from setuptools import find_packages, setup

setup(
    name="rynnec_ros",
    version="0.1.0",
    description="Embodied cognition for ROS 2 robots with the RynnEC video MLLM",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["rynnec_ros", "rynnec_ros.*"]),
    # tokenizer template and SAM2 yaml copied into generated random checkpoints
    package_data={"rynnec_ros.fixtures": ["assets/tiny/*"], "rynnec_ros.eval": ["data/paraphrases/*.yaml"],
                  "rynnec_ros.spatial": ["data/*.txt", "data/*.yaml"]},
    install_requires=[
        "numpy>=1.24",
        "scipy>=1.10",
        "pillow>=10.0",
        "safetensors>=0.4",
        "tokenizers>=0.20",
        "transformers>=4.46,<5",
        "torch>=2.1",
        "pycocotools>=2.0.7",
        "pyyaml>=6",
        "tqdm>=4.66",
        # SAM 2 is Meta's sam2 package, which builds its modules with hydra; sam2 itself is installed
        # from requirements-sam2.txt (SAM2_BUILD_CUDA=0 --no-deps: its torchvision pin would pull a torch)
        "hydra-core>=1.3.2",
        "iopath>=0.1.10",
    ],
    extras_require={
        "video": ["av>=12", "opencv-python-headless>=4.8"],
        "onnx": ["onnx>=1.16", "onnxruntime>=1.18"],
        "eval": ["matplotlib>=3.8", "rosbags>=0.10.9"],
        "bags": ["rosbags>=0.10.9"],
    },
    entry_points={"console_scripts": ["rynnec-ros=rynnec_ros.cli:main"]},
)
