package io.kolo.examples;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.ParallelBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.BatchNorm;
import ai.djl.nn.pooling.Pool;

import java.util.List;

/**
 * ResNet-18/34 (He et al.) with the standard 64-128-256-512 channels: 11.7 M (18) or 21.8 M (34) trainable
 * parameters with 1000 classes. Images up to 64 pixels get the CIFAR stem (one 3x3 convolution, no pooling),
 * larger ones the ImageNet stem (7x7 stride 2 and max pooling); the parameter count barely differs.
 */
final class ResNet {
    private ResNet() {
    }

    static Block build(int layers, int imageSize, int classes) {
        int[] blocks = switch (layers) {
            case 18 -> new int[]{2, 2, 2, 2};
            case 34 -> new int[]{3, 4, 6, 3};
            default -> throw new IllegalArgumentException("ResNet-" + layers + " is not built here: use 18 or 34");
        };
        SequentialBlock net = new SequentialBlock();
        if (imageSize <= 64) {
            net.add(conv(64, 3, 1)).add(BatchNorm.builder().build()).add(Activation::relu);
        } else {
            net.add(conv(64, 7, 2)).add(BatchNorm.builder().build()).add(Activation::relu)
                    .add(Pool.maxPool2dBlock(new Shape(3, 3), new Shape(2, 2), new Shape(1, 1)));
        }
        int[] channels = {64, 128, 256, 512};
        for (int stage = 0; stage < 4; stage++) {
            for (int b = 0; b < blocks[stage]; b++) {
                int stride = stage > 0 && b == 0 ? 2 : 1;
                net.add(residual(channels[stage], stride, stage > 0 && b == 0));
            }
        }
        return net.add(Pool.globalAvgPool2dBlock())
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(classes).build());
    }

    private static Block residual(int channels, int stride, boolean project) {
        SequentialBlock main = new SequentialBlock()
                .add(conv(channels, 3, stride)).add(BatchNorm.builder().build()).add(Activation::relu)
                .add(conv(channels, 3, 1)).add(BatchNorm.builder().build());
        Block shortcut = project
                ? new SequentialBlock().add(conv(channels, 1, stride)).add(BatchNorm.builder().build())
                : Blocks.identityBlock();
        return new SequentialBlock()
                .add(new ParallelBlock(outs -> new NDList(outs.get(0).singletonOrThrow()
                        .add(outs.get(1).singletonOrThrow())), List.of(main, shortcut)))
                .add(Activation::relu);
    }

    private static Conv2d conv(int filters, int kernel, int stride) {
        return Conv2d.builder()
                .setKernelShape(new Shape(kernel, kernel))
                .optStride(new Shape(stride, stride))
                .optPadding(new Shape(kernel / 2, kernel / 2))
                .setFilters(filters)
                .optBias(false)
                .build();
    }
}
