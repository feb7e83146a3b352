package io.kolo.examples;

import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;

/** The synthetic benchmark's networks: few large layers, many small ones, and ResNets. */
final class SyntheticModels {
    private SyntheticModels() {
    }

    static Block block(String model, int imageSize) {
        return switch (model) {
            // 1024 -> 4096 -> 2048 -> 1000: 14.6 M parameters, little compute per byte of gradient.
            case "mlp" -> new SequentialBlock()
                    .add(Linear.builder().setUnits(4096).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(2048).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(1000).build());
            // 1024 -> 32 x 256 -> 1000: 64 small tensors (about 2.5 M parameters), where fusion and cycle time matter.
            case "mlp-deep" -> {
                SequentialBlock b = new SequentialBlock();
                for (int i = 0; i < 32; i++) {
                    b.add(Linear.builder().setUnits(256).build()).add(Activation::relu);
                }
                yield b.add(Linear.builder().setUnits(1000).build());
            }
            case "resnet18", "resnet34" -> ResNet.build(Integer.parseInt(model.substring("resnet".length())),
                    imageSize, 1000);
            default -> throw new IllegalArgumentException("unknown model " + model);
        };
    }
}
