"""Batched rotation helpers on MuJoCo quaternions (w, x, y, z)."""

from __future__ import annotations

import numpy as np


def quat_to_rotmat(q: np.ndarray) -> np.ndarray:
    """(B, 4) unit quaternions -> (B, 3, 3) body-to-world rotation matrices."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    r = np.empty((q.shape[0], 3, 3), dtype=q.dtype)
    r[:, 0, 0] = 1 - 2 * (y * y + z * z)
    r[:, 0, 1] = 2 * (x * y - w * z)
    r[:, 0, 2] = 2 * (x * z + w * y)
    r[:, 1, 0] = 2 * (x * y + w * z)
    r[:, 1, 1] = 1 - 2 * (x * x + z * z)
    r[:, 1, 2] = 2 * (y * z - w * x)
    r[:, 2, 0] = 2 * (x * z - w * y)
    r[:, 2, 1] = 2 * (y * z + w * x)
    r[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def yaw_from_rotmat(r: np.ndarray) -> np.ndarray:
    """Heading (rotation about world z) of (B, 3, 3) rotation matrices."""
    return np.arctan2(r[:, 1, 0], r[:, 0, 0])


def yaw_quat(yaw: np.ndarray) -> np.ndarray:
    """(B,) yaw angles -> (B, 4) quaternions."""
    q = np.zeros((len(yaw), 4))
    q[:, 0] = np.cos(0.5 * yaw)
    q[:, 3] = np.sin(0.5 * yaw)
    return q


def wrap_angle(a: np.ndarray) -> np.ndarray:
    """Wrap angles to [-pi, pi)."""
    return (a + np.pi) % (2 * np.pi) - np.pi


def world_to_body(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate world vectors (B, 3) or (B, K, 3) into the body frames of ``r`` (B, 3, 3)."""
    if v.ndim == 2:
        return np.einsum("bji,bj->bi", r, v)
    return np.einsum("bji,bkj->bki", r, v)


def base_to_foot(joint_pos: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``v`` (B, 4, 3) in the base frame, expressed in each foot's frame (B, 4, 3).

    A foot's frame is its calf's (the foot is fixed to the calf, unrotated): base → hip about x (the hip joint),
    then about y by thigh + calf. ``joint_pos`` (B, 12) absolute joint angles, legs FR, FL, RR, RL.
    """
    q = joint_pos.reshape(-1, 4, 3)
    ch, sh = np.cos(q[..., 0]), np.sin(q[..., 0])
    pitch = q[..., 1] + q[..., 2]
    cp, sp = np.cos(pitch), np.sin(pitch)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    y1, z1 = ch * y + sh * z, -sh * y + ch * z  # Rx(hip)^T
    return np.stack([cp * x - sp * z1, y1, sp * x + cp * z1], axis=-1)  # Ry(pitch)^T
